"""The REST transport (DESIGN section 3): authenticate, validate the shape, call one service or
selector, serialize. No rules live here."""
