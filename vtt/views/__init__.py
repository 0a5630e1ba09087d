"""HTTP blueprints: parse the request, call the domain, render."""
