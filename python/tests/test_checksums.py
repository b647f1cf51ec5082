"""kvchaos.crc64_full / crc32_xor_int64 on Python buffers: the golden vectors of
core/integrity/tests/checksum_test.cc, IOVs as lists, and buffers of every kind without copies."""
import numpy as np
import pytest

import kvchaos


def test_crc64_full_matches_the_golden_vectors():
    assert kvchaos.crc64_full(b"123456789") == 6462064923810974792
    assert kvchaos.crc64_full([b"1234xxxxxxxx5678", b"12"]) == -4247079827690873224
    assert kvchaos.crc64_full([]) == -5302298732530578752, "a block of no IOVs"
    assert kvchaos.crc64_full([b""]) == 3683850728485256227, "a block of one empty IOV"
    a = b"a" * 1024
    assert kvchaos.crc64_full([a, a, a, a]) == 2949337439007406030


def test_crc32_xor_int64_matches_the_golden_vectors():
    assert kvchaos.crc32_xor_int64(b"1234xxxxxxxx5678") == -7046029251787925820
    assert kvchaos.crc32_xor_int64(b"1234xxxxxxxx5678", sample_width=8) == -7046029250659177327
    a = b"a" * 1024
    assert kvchaos.crc32_xor_int64([a, a, a, a]) == 2206454465183425305


def test_any_buffer_gives_the_checksum_of_its_bytes():
    data = bytes(range(256)) * 16
    want = kvchaos.crc64_full(data)
    assert kvchaos.crc64_full(bytearray(data)) == want
    assert kvchaos.crc64_full(memoryview(data)) == want
    assert kvchaos.crc64_full(np.frombuffer(data, dtype=np.float16)) == want, "numpy array viewed as its bytes"
    assert kvchaos.crc64_full(memoryview(data)[:100]) == kvchaos.crc64_full(data[:100])


def test_the_iov_split_is_part_of_the_checksum():
    assert kvchaos.crc64_full([b"abc", b"def"]) != kvchaos.crc64_full([b"abcd", b"ef"])


def test_a_short_iov_raises_kvchaos_error_with_the_status_code():
    with pytest.raises(kvchaos.Error) as e:
        kvchaos.crc32_xor_int64([b"abcd", b"x"])
    assert e.value.code == "InvalidArgument"
    assert "IOV 1" in e.value.message
    assert e.value.errno == 0
    assert str(e.value).startswith("InvalidArgument: ")


def test_a_strided_array_is_refused_naming_the_block():
    with pytest.raises(TypeError, match="block 0: a C-contiguous buffer is needed"):
        kvchaos.crc64_full(np.arange(64)[::2])
    with pytest.raises(TypeError, match="block 0 iov 1"):
        kvchaos.crc64_full([b"ok", np.arange(64)[::2]])
    with pytest.raises(TypeError, match="a buffer or a sequence of buffers"):
        kvchaos.crc64_full(42)
