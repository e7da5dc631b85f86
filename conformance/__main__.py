from conformance._cli import main

main()
