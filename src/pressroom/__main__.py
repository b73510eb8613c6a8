from pressroom.cli import main

main()
