from kitty.entry import main

main()
