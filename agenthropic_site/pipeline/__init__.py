"""A build's orchestration: walk, parse what changed, price, project, gather, render; and its process pool."""
