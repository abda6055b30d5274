"""AWS builders for the queue capability (SQS)."""
