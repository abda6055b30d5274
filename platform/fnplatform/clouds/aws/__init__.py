"""Cloud module: aws. Importing it registers the AWS builders of every capability."""

from fnplatform.clouds.aws import cluster, queue

__all__ = ["cluster", "queue"]
