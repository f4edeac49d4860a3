"""`reasonix serve`: the browser frontend over http.server + SSE."""
