"""Fixtures for the vision tests: ``fake_picamera2`` (picamera2_fake.py) stands in for the Pi-only library."""

from picamera2_fake import fake_picamera2  # noqa: F401 - a fixture, found by name
