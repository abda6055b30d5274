"""Cloud module: azure (under construction)."""
