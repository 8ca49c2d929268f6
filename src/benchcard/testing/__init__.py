"""Test support shipped with the package: the fake OpenAI/Anthropic server. Imports only `_util`."""
