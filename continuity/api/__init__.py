"""The REST transport: authenticate, validate the shape, call one service or
selector, serialize. No rules live here."""
