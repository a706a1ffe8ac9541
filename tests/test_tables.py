"""The chapters' tables: `book.table` and `analysis.compare` print no line wider than
the code box, keep every value, and refuse what they cannot print."""

import pytest

import collectives_lib as cl
from collectives_lib.book import WIDTH, table


def test_table_aligns_text_left_and_numbers_right():
    t = table([("ring", 7, 0.25), ("recursive doubling", 3, None)], ("algorithm", "steps", "x"))
    lines = str(t).splitlines()
    assert lines[0].startswith("algorithm ")
    assert lines[1].startswith("ring ") and lines[1].endswith("0.25")
    assert lines[2].endswith("n/a")
    # numbers end in the same column, text starts in the same column
    assert len(lines[1]) == len(lines[2])
    assert t.column("steps") == ["7", "3"]


def test_formatted_quantities_align_right():
    t = table([("a", cl.format_time(1.5e-3)), ("b", cl.format_time(12e-6))], ("k", "time"))
    a, b = str(t).splitlines()[1:]
    assert a.endswith("1.5 ms") and b.endswith("12 µs") and len(a) == len(b)


@pytest.mark.parametrize("row, message", [
    (("a",), "row 0 has 1 cells"),
    (("a", "x" * 100), "wide"),
])
def test_table_refuses_what_it_cannot_print(row, message):
    with pytest.raises(cl.CollectivesError, match=message):
        table([row], ("name", "value"))


@pytest.mark.parametrize("n", [1, 2, 3, 4, 7])
def test_compare_fits_the_code_box_and_keeps_every_algorithm(n):
    topo = cl.Ring(8, bandwidth=1e9)
    algs = [a for a, why in cl.models.algorithms("all_reduce", topo).items() if why is None][:n]
    c = cl.analysis.compare("all_reduce", topo, algs, [1024, 1 << 20], model="ideal")
    text = str(c)
    assert max(map(len, text.splitlines())) <= WIDTH
    for a in algs:
        assert a[:22] in text
    # every time printed is the estimate's own
    for a in algs:
        for e in c[a]:
            assert f"{e.time * 1e6:.2f}" in text


def test_labels_that_start_with_a_digit_align_left():
    rows = [("1 node (8 GPUs)", "9 of 40", "3.5x"), ("16 nodes (128 GPUs)", "10 of 40", "12x")]
    t = table(rows, ("system", "sizes", "growth"))
    one, sixteen = str(t).splitlines()[1:]
    assert one.startswith("1 node (8 GPUs)  ") and sixteen.startswith("16 nodes")
    assert one.index("9 of 40") == sixteen.index("10 of 40")       # text: same start
    assert one.endswith(" 3.5x") and sixteen.endswith("  12x")     # quantities: same end
