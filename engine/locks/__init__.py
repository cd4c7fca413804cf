"""Table locks: the protocol and in-process lock (`base`), leases (`lease`), the `file`,
`storage`, `zookeeper` and `service` providers (`service_rpc`: its RPC clients), and the
registry that builds the one a deployment chose (`registry`). See engine/README.md."""
