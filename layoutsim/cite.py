"""How output names what stands behind a claim: something a user can open.

A user has the installed package and its documentation, not the source tree: the GPU corpora
(tests/data/, replayed in CI) and the gpu-check reports (docs/validation/) are not installed. So
what layoutsim prints names the page of the documentation that describes the measurement (by
its title in the site's navigation, mkdocs.yml, and the section), and the corpus by its file
name, never by a path of the source tree. tests/cli/test_citations.py holds every command's
output and every string of the package to this.
"""


def docs(page, section=None):
    """'layoutsim docs, PAGE' or 'layoutsim docs, PAGE, "SECTION"'."""
    return f"layoutsim docs, {page}" + (f", '{section}'" if section else "")


def corpus(name, page, section=None):
    """The measured corpus `name` (a file name) and the documentation page that describes it."""
    return f"corpus {name}: {docs(page, section)}"
