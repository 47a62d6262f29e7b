"""`opdb shape-compare` default mode: per_shape.py with opdb's documented differences."""
import per_shape


def main(argv) -> int:
    return per_shape.run(argv, quirks=False)
