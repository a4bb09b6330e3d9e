"""Render the site from the model: pages, the JSON mirror, graphs, through a writer that publishes atomically."""
