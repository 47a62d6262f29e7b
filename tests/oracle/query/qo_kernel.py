from qo_base import QueryError
def kernel_query(db, obj):
    raise QueryError("bad_query", "kernel")
def oneshot_query(one):
    raise QueryError("bad_query", "x")
