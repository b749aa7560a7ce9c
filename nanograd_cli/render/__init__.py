"""Writers: each turns a result into text (or, for graphs, bytes)."""
