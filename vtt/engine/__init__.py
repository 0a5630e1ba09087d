"""The session engine: the rules of a VTT, free of Flask and Socket.IO."""
