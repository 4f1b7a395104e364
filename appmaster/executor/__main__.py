import sys

from appmaster.executor.main import main

sys.exit(main())
