"""`opdb comm validate` behind tests/oracle/bin/opdb: the reference
validator (validate_comm_alignment.py) as it is for --reference-quirks, with
--opdb-default (opdb's documented fixes) otherwise."""
import sys

import validate_comm_alignment as ref


def run(args):
    sys.argv = ["validate_comm_alignment.py"] + list(args)
    return ref.main()


def quirks(args):
    return run(args)


def default(args):
    return run(list(args) + ["--opdb-default"])
