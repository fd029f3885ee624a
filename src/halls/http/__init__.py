"""The HTTP adapter (FastAPI)."""

from halls.http.app import create_app

__all__ = ["create_app"]
