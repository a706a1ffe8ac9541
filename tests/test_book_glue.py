"""collectives_lib.book.glue: the numbers a chapter's prose shows with {eval}`name`."""

from __future__ import annotations

import pytest

from collectives_lib.book import BUILD_ENV, Text, glue, in_book_build
from collectives_lib.errors import CollectivesError


@pytest.fixture
def shell(monkeypatch):
    """An IPython shell, as in a notebook's kernel, removed again after the test."""
    from IPython.core.interactiveshell import InteractiveShell

    monkeypatch.delenv(BUILD_ENV, raising=False)
    sh = InteractiveShell.instance()
    sh.run_cell("from collectives_lib.book import glue")
    yield sh
    InteractiveShell.clear_instance()


def run(shell, code):
    from IPython.utils.capture import capture_output

    with capture_output() as captured:
        result = shell.run_cell(code)
    return result, captured


def test_sets_variables_that_print_without_quotes(shell):
    result, captured = run(shell, 'glue(fl_steps=3, fl_W="45 GB/s", fl_x=0.123456)')
    assert result.success
    ns = shell.user_ns
    assert (repr(ns["fl_steps"]), repr(ns["fl_W"]), repr(ns["fl_x"])) == ("3", "45 GB/s", "0.1235")
    assert all(isinstance(ns[k], Text) for k in ("fl_steps", "fl_W", "fl_x"))
    # what an inline expression gets: IPython's text/plain of the value
    fmt = shell.display_formatter.format(ns["fl_W"])[0]
    assert fmt["text/plain"] == "45 GB/s"


def test_shows_the_numbers_in_the_cell_output(shell):
    _, captured = run(shell, 'glue(a_b=1, c_d="2 us")')
    (out,) = captured.outputs
    assert out.data["text/plain"] == "a_b = 1 · c_d = 2 us"
    assert 'class="cl-numbers"' in out.data["text/html"]
    assert "<code>c_d</code> = 2 us" in out.data["text/html"]


def test_html_is_escaped(shell):
    _, captured = run(shell, 'glue(tag="<b>&</b>")')
    assert "&lt;b&gt;&amp;&lt;/b&gt;" in captured.outputs[0].data["text/html"]


def test_no_output_when_asked_or_in_a_book_build(shell, monkeypatch):
    _, captured = run(shell, "glue(quiet=1, show=False)")
    assert not captured.outputs and shell.user_ns["quiet"] == "1"
    monkeypatch.setenv(BUILD_ENV, "1")
    assert in_book_build()
    _, captured = run(shell, "glue(built=2)")
    assert not captured.outputs and shell.user_ns["built"] == "2"
    monkeypatch.setenv(BUILD_ENV, "0")
    assert not in_book_build()


def test_a_glued_name_may_be_glued_again(shell):
    run(shell, "glue(t=1)")
    result, _ = run(shell, "glue(t=2)")
    assert result.success and shell.user_ns["t"] == "2"


def test_names_without_values_show_numbers_glued_before_again(shell):
    run(shell, 'glue(a_b=1, c_d="2 us")')
    run(shell, "a_b = a_b  # untouched by the code in between")
    result, captured = run(shell, 'glue("c_d", "a_b", e_f=3)')
    assert result.success
    (out,) = captured.outputs
    assert out.data["text/plain"] == "c_d = 2 us · a_b = 1 · e_f = 3"
    assert shell.user_ns["c_d"] == "2 us" and shell.user_ns["e_f"] == "3"


@pytest.mark.parametrize("code, words", [
    ('glue("never")', "'never' names no number glued before; glue it with a value first, glue(never=...)"),
    ('W = 45e9\nglue("W")', "'W' names no number glued before"),
    ("glue(3)", "3 names no number glued before"),
])
def test_showing_again_needs_a_number_glued_before(shell, code, words):
    result, captured = run(shell, code)
    assert isinstance(result.error_in_exec, CollectivesError)
    assert words in str(result.error_in_exec)
    assert not captured.outputs


def test_refuses_to_replace_a_variable_of_the_code(shell):
    result, _ = run(shell, 'W = 45e9\nglue(W="45 GB/s")')
    assert isinstance(result.error_in_exec, CollectivesError)
    message = str(result.error_in_exec)
    assert "'W'" in message and "float" in message
    assert shell.user_ns["W"] == 45e9


@pytest.mark.parametrize("code, words", [
    ("glue()", "at least one name=value, or the name of a number glued before"),
    ('glue(**{"a.b": 1})', "'a.b' is not a variable name"),
    ('glue(**{"x y": 1})', "'x y' is not a variable name"),
])
def test_bad_names_are_refused(shell, code, words):
    result, _ = run(shell, code)
    assert isinstance(result.error_in_exec, CollectivesError)
    assert words in str(result.error_in_exec)


def test_without_ipython_sets_the_callers_globals_and_prints(capsys, monkeypatch):
    monkeypatch.delenv(BUILD_ENV, raising=False)
    ns: dict = {"glue": glue}
    exec("glue(plain=7, unit='1 GB')", ns)
    assert ns["plain"] == "7" and ns["unit"] == "1 GB"
    assert capsys.readouterr().out == "plain = 7 · unit = 1 GB\n"
