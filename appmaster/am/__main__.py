import sys

from appmaster.am.master import main

sys.exit(main())
