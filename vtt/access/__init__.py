"""Who may do what: open join, the host's token, the HTTP protections."""
