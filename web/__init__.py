"""The Flask dashboard and JSON API, served by waitress inside the controller's process."""
