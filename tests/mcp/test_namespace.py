def test_the_exec_description_names_the_configured_mcp_scopes_without_connecting() -> None:
    from clawcell import CodeMode
    from clawcell.mcp import StdioServer

    mode = CodeMode(
        mcp_servers={
            "time": StdioServer(command="never-started"),
            "chrome-devtools": StdioServer(command="never-started"),
        }
    )
    description = mode.model_tools("openai")[0]["function"]["description"]
    assert "`MCP.chromeDevtools`, `MCP.time`" in description
    assert "MCP servers are reached through the `MCP` namespace" in description
    assert "MCP servers" not in CodeMode().model_tools()[0]["description"]
