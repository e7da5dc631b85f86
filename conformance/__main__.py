from conformance.cli.main import main

main()
