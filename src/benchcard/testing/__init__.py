"""Test support shipped with the package: the fake OpenAI/Anthropic server and the cards run against it.

Imports only `_util`."""
