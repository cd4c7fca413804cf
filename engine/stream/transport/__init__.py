"""How writer tasks reach the coordinator: in-process (`local`, tests) or RPC (Spark):
`rpc` the client side and its Endpoint, `server` the coordinator's server. The package
imports none of them, so the RPC client can be imported without the coordinator."""
