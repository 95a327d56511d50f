"""Cameras, card finding and the ONNX card classifier. Knows no game rules."""
