"""Model Context Protocol client: transports, session, OAuth, tool adapter."""
