import pytest

import collectives_lib as cl
from collectives_lib.units import format_bytes, format_rate, format_time, parse_size


@pytest.mark.parametrize("text, expected", [
    ("8", 8), (4096, 4096), ("1KB", 1000), ("1KiB", 1024), ("1K", 1024),
    ("128M", 128 * 2**20), ("8GB", 8 * 10**9), ("1GiB", 2**30), ("1G", 2**30),
    ("1.5MB", 1_500_000), ("2e3", 2000), (" 16 MiB ", 16 * 2**20),
])
def test_parse_size(text, expected):
    assert parse_size(text) == expected


@pytest.mark.parametrize("text, message", [
    ("-5", "size '-5' must be positive"),
    ("0", "size '0' must be positive"),
    ("1XB", "unknown unit 'XB'"),
    ("lots", "is not understood"),
    ("0.5", "not a whole number of bytes"),
    (True, "is not a size"),
])
def test_parse_size_rejects(text, message):
    with pytest.raises(cl.CollectivesError, match=message):
        parse_size(text)


def test_formatting():
    assert format_bytes(14e9) == "14 GB"
    assert format_bytes(2**30, binary=True) == "1 GiB"
    assert format_bytes(512) == "512 B"
    assert format_time(0.035) == "35 ms"
    assert format_time(1e-6) == "1 µs"
    # a thousand seconds and more: whole seconds, never '1.1e3 s'
    assert format_time(1099.7) == "1,100 s" and format_time(999.9) == "1,000 s"
    assert format_time(3.2e6) == "3,200,000 s" and format_time(999.4) == "999 s"
    assert format_rate(4.5e11) == "450 GB/s"
