"""Client ID metadata documents (draft-ietf-oauth-client-id-metadata-document; MCP's preferred
client registration): a client whose client_id is an https URL is described by the JSON
document at that URL.

DOT 3.4.1 resolves such a client on first sight and re-fetches it when stale
(`CIMD_ENABLED`); HeyAira supplies its fetcher (`fetch`: SSRF-safe, pinned DNS, the operator's
CA bundle), the checks a document must pass (`document`), the registration limits (`limits`),
and the reasons and audit events DOT leaves out (`refusals`, `outcome`).
"""
