"""`opdb m6` default mode: compute_m6.py with opdb's documented differences."""
import compute_m6


def main(argv) -> int:
    return compute_m6.run(argv, quirks=False)
