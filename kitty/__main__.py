from kitty.cli import main

main()
