"""kube-scheduler's default plugins for schedframe.

This package imports nothing on purpose: schedframe finds each plugin through its entry point
in the ``schedframe.plugins`` group and imports a plugin's module only when a profile enables it.
"""
