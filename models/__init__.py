"""Committed ONNX card models and the seeded recipe that trains them."""
