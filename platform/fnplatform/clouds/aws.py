"""Cloud module: aws (under construction)."""
