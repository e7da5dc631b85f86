"""Layer 8 (applications): replaying captures to clients: `conformance serve` answers HTTP
requests on 127.0.0.1 from recorded responses (`http_server`), `conformance replay` checks
Python clients with vcrpy answering (`vcrpy_clients`)."""
