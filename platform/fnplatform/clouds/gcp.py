"""Cloud module: gcp (under construction)."""
