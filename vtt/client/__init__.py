"""The protocol's client side: a connection that retries until acked, and the view it keeps."""
