from qo_base import miss
def wrapper(db, e, q, r):
    return miss("wrapper_interpolation_failed")
