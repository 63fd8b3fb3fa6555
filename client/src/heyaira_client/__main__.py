from heyaira_client.cli import main

main()
