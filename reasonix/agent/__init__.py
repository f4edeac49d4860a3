"""The agent: loop, sessions and transcripts, context maintenance, memory."""
