"""The site's side of the chapters' portable markdown.

A chapter's markdown must read well where no MyST runs: Colab and VS Code
render plain CommonMark, and show a MyST directive as a run-on paragraph (a
takeaway box) or as a code block (a folded solution), and a role such as
``{term}`` as its raw text. So the chapters write only CommonMark (plus math
and the ``{eval}`` numbers, which ``collectives_lib.book.glue`` also shows in
the cell above), and this extension turns that CommonMark into the site's
elements (tests/test_portable_markdown.py holds the chapters to it):

1. **Callouts.** A blockquote whose first words are one of these bold labels
   becomes the element the label names; the label is the title::

       > **Takeaway.** A ring all-gather ...          a tip box titled "Takeaway"
       > **Worked example: 88 nodes against 40.** ... a box with that title
       > **Note.** ... / > **Warning.** ...           a note or warning box
       > **Solution to exercise 2.** ...              a folded dropdown, as {dropdown}

   Any other blockquote stays a quotation.

2. **Links to glossary terms and labels.** Chapters link with Markdown links
   that JupyterLab can follow too: ``[all-gather](../book/glossary.md#term-all-gather)``,
   ``[Li et al., 2020](../book/references.md#ref-li2020)``. myst-parser resolves
   ``page.md#id`` only for heading anchors, and warns (an error, since the book
   builds with warnings as errors) for any other id. This extension adds each
   page's glossary terms and ``(label)=`` targets to that page's anchors, so
   such links resolve; a link to an id that no page defines still fails the build.
"""

from __future__ import annotations

import re

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.transforms import SphinxTransform

LABEL = re.compile(r"(?P<label>Takeaway|Note|Warning|Worked example: .+?|Solution to exercise \d+)[.:]?")


def _title_children(strong: nodes.strong) -> list[nodes.Node]:
    """The label's own nodes, without its closing full stop or colon."""
    children = [child.deepcopy() for child in strong.children]
    if children and isinstance(children[-1], nodes.Text):
        text = str(children[-1]).rstrip()
        children[-1] = nodes.Text(text[:-1] if text.endswith((".", ":")) else text)
    return children


def _callout(label: str, title: list[nodes.Node], body: list[nodes.Node]) -> nodes.Element:
    if label.startswith("Solution to exercise"):
        from sphinx_design.shared import create_component

        # What sphinx-design's {dropdown} directive builds; its HTML transform makes it a <details>.
        node = create_component("dropdown", opened=False, type="dropdown", has_title=True, icon=None,
                                chevron=None, container_classes=["sd-mb-3"], title_classes=[], body_classes=[])
        node += nodes.rubric(label, "", *title)
    elif label in ("Note", "Warning"):
        node = nodes.note() if label == "Note" else nodes.warning()
    else:
        # What the {admonition} directive builds: a takeaway as with `:class: tip`.
        node = nodes.admonition(classes=["tip"] if label == "Takeaway" else [f"admonition-{nodes.make_id(label)}"])
        node += nodes.title(label, "", *title)
    node += body
    return node


class Callouts(SphinxTransform):
    """Blockquotes that open with a bold label become boxes and dropdowns (see the module docstring)."""

    default_priority = 500

    def apply(self, **kwargs) -> None:
        for quote in list(self.document.findall(nodes.block_quote)):
            para = quote.children[0] if quote.children else None
            if not isinstance(para, nodes.paragraph):
                continue
            while para.children and isinstance(para[0], nodes.Text) and not str(para[0]).strip():
                para.remove(para[0])   # myst-parser may open a paragraph with an empty text node
            if not para.children or not isinstance(para[0], nodes.strong):
                continue
            match = LABEL.fullmatch(para[0].astext().strip())
            if not match:
                continue
            title = _title_children(para[0])
            para.remove(para[0])
            if para.children and isinstance(para[0], nodes.Text):
                rest = str(para[0]).lstrip()
                if rest:
                    para.replace(para[0], nodes.Text(rest))
                else:
                    para.remove(para[0])
            if not para.children:
                quote.remove(para)
            node = _callout(match["label"], title, list(quote.children))
            node.source, node.line = quote.source, quote.line
            quote.replace_self(node)


def _note_anchors(app: Sphinx, doctree: nodes.document) -> None:
    """Add the page's glossary terms and labels to the anchors myst-parser resolves ``page.md#id`` with."""
    env = app.env
    std = env.get_domain("std")
    anchors = env.metadata[env.docname].setdefault("myst_slugs", {})
    for (objtype, name), (docname, node_id) in std.objects.items():
        if objtype == "term" and docname == env.docname:
            anchors.setdefault(node_id, (0, node_id, name))
    for name, (docname, node_id) in std.anonlabels.items():   # every label, with a title or not
        if docname == env.docname and node_id:
            anchors.setdefault(node_id, (0, node_id, name))


def setup(app: Sphinx) -> dict:
    app.add_transform(Callouts)
    app.connect("doctree-read", _note_anchors)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1.0"}
