"""Tests of the opdb Python package over libopdb (standard library only; run with Debian's
python3 and OPDB_LIBRARY pointing at the built library)."""
import ctypes
import os
import shutil
import tempfile
import threading
import unittest
import warnings

import opdb
import opdb.tensorcast

HEADER = ("OP State,Accelerator Core,Input Shapes,Input Data Types,Input Formats,Output Shapes,"
          "Output Data Types,Output Formats,Average Duration(us)\n")
MATMUL_ROWS = [
    ("2,4096;2048,4096", "2,2048", "22.5"),
    ("8,4096;2048,4096", "8,2048", "30.25"),
    ("32,4096;2048,4096", "32,2048", "41.0"),
]
MAPPING = """version: "python-test"
operator_mappings:
  "aten.mm.default":
    kernel_type: MatMulV2
  "aten.view.default":
    zero_cost: true
"""


def make_db(folder):
    with open(os.path.join(folder, "MatMulV2.csv"), "w") as f:
        f.write(HEADER)
        for shapes, out, dur in MATMUL_ROWS:
            f.write('dynamic,AI_CORE,"%s",DT_BF16;DT_BF16,ND;ND,"%s",DT_BF16,ND,%s\n' % (shapes, out, dur))
    with open(os.path.join(folder, "op_mapping.yaml"), "w") as f:
        f.write(MAPPING)


def mm(m):
    # weights stored (N, K) in the rows: the query's (K, N) matches them transposed
    return ("aten.mm.default", [opdb.Tensor((m, 4096), "bfloat16"), opdb.Tensor((4096, 2048), "bfloat16")],
            opdb.Tensor((m, 2048), "bfloat16"))


class DatabaseTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="opdb-py-")
        make_db(cls.dir)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def open(self, **kw):
        return opdb.Database(self.dir, **kw)

    def test_library_found(self):
        self.assertTrue(os.path.exists(opdb.library_path()) or "libopdb" in opdb.library_path())

    def test_options_struct_matches_library(self):
        # the library fills the mirror as far as it goes: its defaults land on the mirror's fields
        from opdb import _lib
        lib = _lib.load()[0]
        opts = _lib.QdbOpts()
        lib.opdb_qdb_opts_init_sized(ctypes.byref(opts), ctypes.sizeof(opts))
        self.assertEqual(opts.size, ctypes.sizeof(_lib.QdbOpts))
        self.assertTrue(opts.interpolation)
        self.assertEqual(opts.result_cache, 1 << 16)
        self.assertEqual(opts.line_memo, 5 << 19)

    def test_options_init_never_past_the_mirror(self):
        # a mirror shorter than the library's struct (an older binding) is not written past
        from opdb import _lib
        lib = _lib.load()[0]
        n = _lib.QdbOpts.read_files.offset
        buf = ctypes.create_string_buffer(b"\xa5" * 512, 512)
        lib.opdb_qdb_opts_init_sized(ctypes.cast(buf, ctypes.POINTER(_lib.QdbOpts)), n)
        self.assertEqual(ctypes.c_size_t.from_buffer(buf).value, n)
        self.assertEqual(buf.raw[n:], b"\xa5" * (512 - n))

    def test_exact_hit(self):
        with self.open(interpolation=False) as db:
            r = db.lookup(*mm(8))
        self.assertTrue(r.hit)
        self.assertEqual(r.source, "MEASURED")
        self.assertEqual(r.latency_us, 30.25)
        self.assertEqual(r.kernel_type, "MatMulV2")
        self.assertIsNotNone(r.shape_match_rule)
        self.assertIsNone(r.miss_reason)

    def test_read_files_same_answer(self):
        with self.open(interpolation=False) as mapped, \
                self.open(interpolation=False, eager_load=True, read_files=True) as read:
            a, b = mapped.lookup(*mm(8)), read.lookup(*mm(8))
        self.assertTrue(b.hit)
        self.assertEqual((a.latency_us, a.kernel_type, a.source), (b.latency_us, b.kernel_type, b.source))

    def test_miss_has_reason(self):
        with self.open(interpolation=False) as db:
            r = db.lookup("aten.mm.default", [opdb.Tensor((8, 111)), opdb.Tensor((111, 7))])
        self.assertFalse(r.hit)
        self.assertEqual(r.source, "MISS")
        self.assertIsNone(r.latency_us)
        self.assertIsInstance(r.miss_reason, str)

    def test_unmapped_and_zero_cost(self):
        with self.open() as db:
            self.assertFalse(db.lookup("aten.nonexistent.default", []).hit)
            z = db.lookup("aten.view.default", [opdb.Tensor((4, 4))])
        self.assertTrue(z.hit)
        self.assertEqual(z.shape_match_rule, "zero_cost")

    def test_bad_query_is_an_error_result(self):
        with self.open() as db:
            r = db.lookup("aten.mm.default", [opdb.Tensor((2, 2), "complex_thing")])
        self.assertEqual(r.source, "ERROR")
        self.assertTrue(r.miss_reason.startswith("error:"))

    def test_lookup_many_in_order_and_same_as_one_by_one(self):
        queries = [mm(m) for m in (2, 8, 32, 5, 8, 2)] * 50
        with self.open(interpolation=False) as db:
            many = db.lookup_many(queries)
            threaded = db.lookup_many(queries, threads=4)
            single = [db.lookup(*q) for q in queries[:6]]
        self.assertEqual(len(many), len(queries))
        self.assertEqual([r.as_dict() for r in many], [r.as_dict() for r in threaded])
        for a, b in zip(many[:6], single):
            self.assertEqual(a.latency_us, b.latency_us)
            self.assertEqual(a.source, b.source)
        self.assertEqual([r.latency_us for r in many[:3]], [22.5, 30.25, 41.0])

    def test_threads_share_one_handle(self):
        with self.open(interpolation=False) as db:
            want = db.lookup(*mm(32)).latency_us
            got, errors = [], []

            def worker():
                try:
                    for _ in range(50):
                        got.append(db.lookup(*mm(32)).latency_us)
                except Exception as e:  # surfaced below
                    errors.append(e)
            ts = [threading.Thread(target=worker) for _ in range(4)]
            for t in ts:
                t.start()
            for t in ts:
                t.join()
        self.assertEqual(errors, [])
        self.assertEqual(got, [want] * 200)

    def test_lookup_kernel(self):
        with self.open(interpolation=False) as db:
            k = db.lookup_kernel("MatMulV2", inputs=[((8, 4096), "DT_BF16"), ((2048, 4096), "DT_BF16")])
        self.assertTrue(k.hit)
        self.assertEqual(k.latency_us, 30.25)
        self.assertEqual(k.kernel_type, "MatMulV2")

    def test_explain_names_the_row(self):
        with self.open(interpolation=False) as db:
            r = db.lookup(*mm(8), explain=True)
        self.assertIsNotNone(r.explain)
        self.assertIn("MatMulV2.csv", str(r.explain))

    def test_open_failure_raises(self):
        with self.assertRaises(opdb.OpdbError):
            opdb.Database(os.path.join(self.dir, "no-such-folder"))

    def test_closed_database_raises(self):
        db = self.open()
        db.close()
        with self.assertRaises(opdb.OpdbError):
            db.lookup(*mm(8))

    def test_warnings_reach_python(self):
        bare = tempfile.mkdtemp(prefix="opdb-py-nomap-")
        try:
            shutil.copy(os.path.join(self.dir, "MatMulV2.csv"), bare)
            seen = []
            opdb.Database(bare, warn=seen.append).close()
            self.assertTrue(any("op_mapping.yaml" in s for s in seen), seen)
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                opdb.Database(bare).close()
            self.assertTrue(any(issubclass(x.category, opdb.OpdbWarning) for x in w))
        finally:
            shutil.rmtree(bare, ignore_errors=True)


# ---- stand-ins for the torch and TensorCast objects the adapter sees
class FakeDType:
    def __init__(self, name):
        self.name = name

    def __str__(self):
        return "torch." + self.name


FakeDType.__name__ = "dtype"


class FakeDevice:
    def __init__(self, kind):
        self.type = kind


class FakeTensor:
    def __init__(self, shape, dtype="bfloat16", device="meta", data=None):
        self.shape = tuple(shape)
        self.dtype = FakeDType(dtype)
        self.device = FakeDevice(device)
        self._data = data

    def detach(self):
        return self

    def cpu(self):
        return self

    def reshape(self, *_):
        return self

    def tolist(self):
        return list(self._data)


class FakeOp:
    def __init__(self, name):
        self.name = name

    def __str__(self):
        return self.name


class FakeInvoke:
    def __init__(self, func, args, out=None, kwargs=None):
        self.func = FakeOp(func)
        self.args = args
        self.out = out
        self.kwargs = kwargs or {}


class TensorCastAdapterTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="opdb-py-tc-")
        make_db(cls.dir)
        cls.db = opdb.Database(cls.dir, interpolation=False)

    @classmethod
    def tearDownClass(cls):
        cls.db.close()
        shutil.rmtree(cls.dir, ignore_errors=True)

    def test_hit_becomes_query_result(self):
        src = opdb.tensorcast.DataSource(self.db)
        r = src.lookup(FakeInvoke("torch.ops.aten.mm.default",
                                  [FakeTensor((8, 4096)), FakeTensor((4096, 2048))], out=FakeTensor((8, 2048))))
        self.assertIsNotNone(r)
        self.assertEqual(r.latency_us, 30.25)
        self.assertEqual(r.confidence, 1.0)
        self.assertEqual(r.source.name, "MEASURED")
        self.assertEqual(r.details, {"kernel_type": "MatMulV2"})
        self.assertIsNotNone(r.shape_match_info.rule)
        self.assertIsNone(src.last_miss_reason)

    def test_miss_is_none_with_reason(self):
        src = opdb.tensorcast.DataSource(self.db)
        r = src.lookup(FakeInvoke("aten.mm.default", [FakeTensor((3, 5)), FakeTensor((5, 7))]))
        self.assertIsNone(r)
        self.assertIsInstance(src.last_miss_reason, str)

    def test_unsupported_dtype(self):
        src = opdb.tensorcast.DataSource(self.db)
        r = src.lookup(FakeInvoke("aten.mm.default", [FakeTensor((8, 4096), "complex64"), FakeTensor((4096, 2048))]))
        self.assertIsNone(r)
        self.assertEqual(src.last_miss_reason, "error:unsupported_dtype:complex64")

    def test_conversion_of_values(self):
        src = opdb.tensorcast.DataSource(self.db, max_values=4)
        small = FakeTensor((2,), "int32", device="cpu", data=[5, 7])
        big = FakeTensor((8,), "int32", device="cpu", data=list(range(8)))
        meta = FakeTensor((2,), "int32", device="meta", data=[1, 2])
        q = src.query_of(FakeInvoke("torch.ops.x.y", [small, big, meta, FakeDType("float32"), [1, (2.5, None)]],
                                    kwargs={"k": small}))
        self.assertEqual(q["op"], "x.y")
        self.assertEqual(q["args"][0], {"shape": [2], "dtype": "int32", "values": [5, 7]})
        self.assertNotIn("values", q["args"][1])
        self.assertNotIn("values", q["args"][2])
        self.assertEqual(q["args"][3], {"dtype_value": "float32"})
        self.assertEqual(q["args"][4], [1, [2.5, None]])
        self.assertEqual(q["kwargs"]["k"]["values"], [5, 7])

    def test_lookup_many_matches_lookup(self):
        src = opdb.tensorcast.DataSource(self.db)
        invs = [FakeInvoke("aten.mm.default", [FakeTensor((m, 4096)), FakeTensor((4096, 2048))]) for m in (2, 8, 3)]
        many = src.lookup_many(invs)
        one = [src.lookup(i) for i in invs]
        self.assertEqual([r and r.latency_us for r in many], [r and r.latency_us for r in one])


if __name__ == "__main__":
    unittest.main()
