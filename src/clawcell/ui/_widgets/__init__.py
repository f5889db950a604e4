"""The `show_widget` tool: checking and storing a widget, its canonical page on the canvas
host, and report mode (a structured report drawn as a static card).

Internals of `clawcell.ui`; the tool is `clawcell.ui.widget_tool`."""
