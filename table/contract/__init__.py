"""The contract between the table and its dashboard: the snapshot the referee publishes
(``snapshot``), the commands the host sends (``commands``, their payloads checked by
``payloads`` from the plain ``values``), and the service the dashboard is given (``service``).

In ``table`` because the referee produces and consumes these; ``web`` imports them from here (and
re-exports them under their old names ``web.snapshot``, ``web.commands``, ``web.validate`` and
``web.service``). Nothing here imports Flask or any ``web`` module.
"""
