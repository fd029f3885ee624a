"""In-memory indexes any backend can keep beside its store: BM25 postings and vectors."""
