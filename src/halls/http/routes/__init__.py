"""HTTP routes, one module per tier or concern; each is a thin call into Memory."""
