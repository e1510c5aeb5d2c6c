#!/usr/bin/env python3
"""MCP server built with the official Python SDK (mcp 2.x MCPServer), stdio transport: the
target of `mcpkit codegen`'s tests, with the schemas the SDK derives from pydantic models
(draft 2020-12, `$defs`, `anyOf` with null, enums from Literal, defaults, output schemas).

Tools:
  add(a: int, b: int) -> int                       structured {"result": a + b}
  describe(contact: Contact, shout: bool = False)  text about the contact
  make_contact(name: str, city: str) -> Contact    structured Contact (with a nested Address)
  fail()                                           always a tool error (isError: true)
With CODEGEN_SERVER_DRIFT=1 in the environment the tools drift: `add` gets another
description and a `multiply` tool appears (the `--check` test).
"""

import os
from typing import Literal, Optional

from pydantic import BaseModel, Field

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

DRIFT = os.environ.get("CODEGEN_SERVER_DRIFT") == "1"

server = MCPServer("python-codegen-server")


class Address(BaseModel):
    """A postal address."""

    street: str = Field(description="Street and number.")
    city: str = Field(description="The city.")
    postcode: Optional[str] = Field(default=None, description="The postcode, when known.")


class Contact(BaseModel):
    """Someone to write to."""

    name: str = Field(description="The full name.")
    kind: Literal["person", "company"] = Field(default="person", description="Person or company.")
    address: Address
    tags: list[str] = Field(default_factory=list, description="Free-form labels.")


@server.tool(description="Add two integers, again" if DRIFT else "Add two integers")
async def add(a: int, b: int) -> int:
    return a + b


@server.tool(description="Describe a contact in one line")
async def describe(contact: Contact, shout: bool = False) -> str:
    line = f"{contact.name} ({contact.kind}) in {contact.address.city}"
    if contact.tags:
        line += " [" + ", ".join(contact.tags) + "]"
    return line.upper() if shout else line


@server.tool(description="Make a contact living in a city")
async def make_contact(name: str, city: str) -> Contact:
    return Contact(name=name, address=Address(street="1 Main Street", city=city), tags=["new"])


@server.tool(description="Always fails (returns a tool error with isError: true)")
async def fail() -> str:
    raise ToolError("intentional failure from fail()")


if DRIFT:

    @server.tool(description="Multiply two integers")
    async def multiply(a: int, b: int) -> int:
        return a * b


if __name__ == "__main__":
    server.run("stdio")
